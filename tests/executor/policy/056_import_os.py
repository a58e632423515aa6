# expect: refused Import of os is not allowed
import os
