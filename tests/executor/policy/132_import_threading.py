# expect: refused Import of threading is not allowed
import threading
