calls = []
class H:
    def __init__(self, v):
        self.v = v
    def __hash__(self):
        calls.append(self.v)
        return hash(self.v)
    def __eq__(self, o):
        return self.v == o.v
d = {}
d[H(1)] = 'one'
x = d[H(1)]
s = {H(2), H(2)}
(x, len(s), calls)
