# expect: refused Import of threading is not allowed
# queue imports threading; reaching it through queue's namespace is an import of threading.
from queue import threading
