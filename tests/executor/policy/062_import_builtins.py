# expect: refused Import of builtins is not allowed
import builtins
