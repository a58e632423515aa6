# expect: refused Import of os.path is not allowed
import os.path
