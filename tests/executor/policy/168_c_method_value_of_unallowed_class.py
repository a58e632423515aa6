# expect: refused Forbidden access to _thread.lock.release: module _thread is not allowed
# The same method read as a value (a bound C method: its class is found along the object's
# MRO by the descriptor it was made from).
import queue
release = queue.Queue().mutex.release
