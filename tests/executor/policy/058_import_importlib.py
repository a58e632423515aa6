# expect: refused Import of importlib is not allowed
import importlib
