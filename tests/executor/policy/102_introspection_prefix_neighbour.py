# expect: native
# Names that only look alike stay usable.
class Box:
    pass
b = Box()
b.cox, b.f_x, b.gi, b.tb = 1, 2, 3, 4
(b.cox, b.f_x, b.gi, b.tb, hasattr(b, 'frame'))
