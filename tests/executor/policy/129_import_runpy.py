# expect: refused Import of runpy is not allowed
import runpy
