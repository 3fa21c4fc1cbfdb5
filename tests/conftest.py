"""Shared test configuration: pytester for the plugin's real pytest runs."""

pytest_plugins = ["pytester"]
