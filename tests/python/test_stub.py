"""The extension module's type stub (python/polyinfer/_polyinfer.pyi) is what nanobind's
stubgen makes of the module built now: a change to the extension's functions shows here until
the stub is made again:

    PYTHONPATH=build/python .venv/bin/python -c "import polyinfer._polyinfer as m; \\
      from nanobind.stubgen import StubGen; sg = StubGen(m); sg.put(m); \\
      open('python/polyinfer/_polyinfer.pyi', 'w').write(sg.get())"
"""

import os

from nanobind.stubgen import StubGen

import polyinfer._polyinfer as ext

STUB = os.path.join(os.path.dirname(__file__), "..", "..", "python", "polyinfer",
                    "_polyinfer.pyi")


def test_the_extension_stub_is_current():
    sg = StubGen(ext)
    sg.put(ext)
    with open(STUB) as f:
        assert f.read() == sg.get(), "python/polyinfer/_polyinfer.pyi is stale; make it again"
