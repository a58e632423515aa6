# expect: refused Forbidden access to threading.Condition.notify: module threading is not allowed
# A bound method is judged by its function: a queue hands out a threading.Condition, whose
# module this profile does not allow.
import queue
queue.Queue().not_empty.notify
