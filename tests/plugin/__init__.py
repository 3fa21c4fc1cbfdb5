"""Tests of the pytest plugin (pytest_rewardkit), mostly real pytest runs through pytester."""
