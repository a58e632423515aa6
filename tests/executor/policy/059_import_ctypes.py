# expect: refused Import of ctypes is not allowed
import ctypes
