# expect: refused Import of types is not allowed
import types
