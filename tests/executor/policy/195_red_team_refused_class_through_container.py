# expect: refused Forbidden access to class threading.Condition
# The red team's chain, kept whole: map(type, ...) handed out refused classes in a list (C code
# called type, where the walk saw no result); map(*list, ...) called them and class
# X(*list) subclassed them. type's answers to C code the snippet calls are checked now
# (guard_type.c), and the items of *iterable and class bases too.
import queue
q = queue.Queue()
classes = list(map(type, [q.not_empty]))
made = list(map(*classes, [q.mutex]))
class Cond(*classes):
    pass
print(made, Cond.mro())
