# expect: refused Import of codeop is not allowed
import codeop
