# expect: refused Import of code is not allowed
import code
