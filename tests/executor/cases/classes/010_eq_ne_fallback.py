class V:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
print(V(1) == V(1), V(1) != V(1), V(1) != V(2))
class N:
    pass
n = N()
(n == n, n == N(), n != N())
