# expect: refused Import of subprocess is not allowed
import subprocess
