class Managed:
    def __init__(self):
        self.state = 'new'
    def __enter__(self):
        self.state = 'open'
        return self
    def __exit__(self, *exc):
        self.state = 'closed'
m = Managed()
with m as inside:
    during = inside.state
(during, m.state, inside is m)
