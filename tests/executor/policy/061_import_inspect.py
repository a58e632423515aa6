# expect: refused Import of inspect is not allowed
import inspect
