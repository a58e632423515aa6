class A:
    pass
class B(A):
    pass
(type(B()).__name__, isinstance(B(), A), issubclass(B, (int, A)), B.__name__, type(3).__name__, callable(A))
