# expect: refused Import of gc is not allowed
import gc
