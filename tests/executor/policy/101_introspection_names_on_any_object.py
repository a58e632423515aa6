# expect: refused Forbidden access to introspection attribute: f_builtins
# The names are refused on every object, not only on frames: no guess about which type
# carries them can be wrong.
class Box:
    pass
b = Box()
setattr(b, 'f_builtins', 1)
