def f(a: int, b: 'str' = 'x') -> list:
    return [a, b]
x: int = 3
f(x)
