# expect: refused Import of signal is not allowed
import signal
