# imports: queue
# expect: refused Forbidden access to _thread.lock.__enter__: module _thread is not allowed
# s.__exit__ read by the walk is refused (a C method of a refused class), but `with` looked
# __enter__ and __exit__ up on the type and ran them unchecked: pprint's stream (then the
# worker's sys.stdout, now the executor's own, stdio.c) was closed for all later library code;
# a queue's lock was taken by the snippet's `with`, and threading.Condition ran its acquire
# (336).
import queue
q = queue.Queue()
with q.mutex:
    print('entered')
