# hostile: appended to assignments/bleu.py
# A5/A19/A20: the unimplemented stub, shipped beside files that would make it pass if anything loaded them: a
# conftest.py that marks every test passed, pytest.ini, sitecustomize.py / usercustomize.py, modules named like
# the ones the stub and the worker import (json, torch, collections, math), a .pth file, and (made by the test)
# __pycache__/bleu.cpython-XY.pyc compiled from the reference with an unchecked hash.
