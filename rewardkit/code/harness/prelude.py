# ruff: noqa
# The imports LiveCodeBench's and APPS's (verl's prime_code's) harnesses put before a program, in
# their order, which programs of those data sets rely on (``Counter`` with no import): the
# candidate and stdio harnesses run it in the program's namespace before APPS-form tests.
from string import *
from re import *
from datetime import *
from collections import *
from heapq import *
from bisect import *
from copy import *
from math import *
from random import *
from statistics import *
from itertools import *
from functools import *
from operator import *
from io import *
from sys import *
from json import *
from builtins import *
from typing import *
import string
import re
import datetime
import collections
import heapq
import bisect
import copy
import math
import random
import statistics
import itertools
import functools
import operator
import io
import sys
import json

sys.setrecursionlimit(6 * 10**5)
