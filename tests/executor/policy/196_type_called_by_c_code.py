# expect: refused Forbidden access to class threading.Condition
# type(x) called by C code the snippet called (map, sorted's key=, a dict's update) answers
# classes where the walk sees no result: what it answers then is checked as the walk checks
# its own calls' results. queue.Queue().not_empty is a threading.Condition.
import queue
q = queue.Queue()
d = {}
d.update(zip(['c'], map(type, [q.not_empty])))
