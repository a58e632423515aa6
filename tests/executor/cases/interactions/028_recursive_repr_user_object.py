class Node:
    def __init__(self):
        self.children = []
    def __repr__(self):
        return 'Node(%r)' % self.children
n = Node()
n.children.append(Node())
lst = [1]
lst.append(lst)
print(n, lst)
repr(n)
