class Pt:
    def __init__(self, x):
        self.x = x
    def __repr__(self):
        return f'Pt({self.x})'
Pt(3)
