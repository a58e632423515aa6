# expect: refused Import of marshal is not allowed
import marshal
