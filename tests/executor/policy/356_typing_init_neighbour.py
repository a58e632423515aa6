# imports: typing
# expect: logs +T list[int] typing.List[int]
# 355's neighbour: typing still makes its objects (the class call runs __init__ from C), and the
# snippet's own subclass of a user-facing typing class keeps working.
import typing
T = typing.TypeVar('T', covariant=True)
class Box(typing.Generic[T]):
    def __init__(self, v):
        super().__init__()
        self.v = v
GA = type(typing.List[int])
print(T, Box[int](1).v and list[int], GA(list, (int,), name='List'))
