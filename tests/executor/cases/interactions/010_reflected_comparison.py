class Big:
    def __gt__(self, o):
        return True
    def __lt__(self, o):
        return False
(1 < Big(), Big() > 1, 1 > Big(), sorted([3, Big(), 1], key=lambda v: v if isinstance(v, int) else 99)[-1].__class__ is Big if False else 'ok')
