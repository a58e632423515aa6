# expect: refused Forbidden access to class threading.Condition
# Call results and attributes are checked, not the items of a container they return:
# map(type, ...) hands out refused classes in a list; map(*list, ...) calls them and
# class X(*list) subclasses them.
import queue
q = queue.Queue()
classes = list(map(type, [q.not_empty]))
made = list(map(*classes, [q.mutex]))
class Cond(*classes):
    pass
print(made, Cond.mro())
