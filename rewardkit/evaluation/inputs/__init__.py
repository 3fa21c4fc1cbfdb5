"""The input side of a run: the input file, its blocks of lines, and the cases they hold.

Imports nothing of the worker or main side: both read input through it."""
