# imports: queue
# expect: refused Forbidden access to threading.Condition.__enter__: module threading is not allowed
# 335 with a queue's condition variable: threading's Python methods ran from `with`.
import queue
q = queue.Queue()
with q.not_empty:
    print('entered')
