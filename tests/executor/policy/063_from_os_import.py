# expect: refused Import of os is not allowed
from os import path
