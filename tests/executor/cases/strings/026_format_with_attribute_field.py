class P:
    def __init__(self):
        self.x = 3
        self.y = 4
p = P()
print('{0.x},{0.y}'.format(p), '{p.x}'.format(p=p))
'{:>{}}'.format('r', 4)
