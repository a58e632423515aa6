class Box:
    def __init__(self, items):
        self.items = items
    def __len__(self):
        return len(self.items)
    def __contains__(self, x):
        return x in self.items
class Flag:
    def __bool__(self):
        return False
print(len(Box([1, 2])), bool(Box([])), 2 in Box([2]), 'yes' if Flag() else 'no', not Flag())
bool(Box([0]))
