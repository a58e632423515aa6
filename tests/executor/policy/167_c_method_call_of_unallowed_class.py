# expect: refused Forbidden access to _thread.lock.acquire: module _thread is not allowed
# A C type's methods are no module's functions: they are judged by the class defining them. A
# queue (allowed) holds a _thread.lock (threading is not); called at once (obj.name(...)).
import queue
queue.Queue().mutex.acquire()
