# expect: refused Import of sys is not allowed
import sys
