# expect: refused Forbidden access to class threading.Condition
# imports: string
# Formatter.get_value called by C code (map) hands out an item of a list filled by C code: the
# refused class threading.Condition. What it returns is checked.
import string, queue
q = queue.Queue()
L = []
L.extend(map(type, [q.not_empty]))
list(map(string.Formatter().get_value, [0], [L], [{}]))
