# expect: refused Forbidden access to threading.Condition.notify: module threading is not allowed
# A held object of an allowed module (queue) holding one of a module this profile does not
# allow (threading): its methods are refused, called or read.
import queue
queue.Queue().not_empty.notify()
