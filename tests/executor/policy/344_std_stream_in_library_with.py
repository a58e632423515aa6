# imports: pprint, queue
# expect: logs refused as a condition: TypeError
# queue.Queue.put runs `with self.not_full:` in queue's own code, and the snippet may store any
# object on a queue it made: with the worker's stdout standing in for the condition, queue's
# `with` ran _io's __exit__ and closed it. The snippet's stdout is no context manager.
import pprint, queue
s = pprint.PrettyPrinter()._stream
q = queue.Queue()
q.not_full = s
try:
    q.put(1)
except TypeError as e:
    print('refused as a condition:', type(e).__name__)
pprint.pprint('still open')
