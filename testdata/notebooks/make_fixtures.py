"""Regenerate the .ipynb fixtures of premortem's notebook package tests.

Run with a Python that has nbformat, nbclient, ipykernel, pandas and matplotlib:

    /usr/bin/python3 make_fixtures.py

Cells are executed in a real kernel, some out of page order (as people do), and the files
are written by nbformat itself, so they are byte-for-byte what Jupyter writes.
"""
import base64
import copy
import os
import struct
import zlib

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

HERE = os.path.dirname(os.path.abspath(__file__))


def tiny_png():
    """A 2x2 red PNG for a markdown attachment."""
    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def kernel_metadata(nb, version):
    """The notebook metadata Jupyter writes for a Python 3 kernel."""
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": version,
    }


def run(nb, order, skip=()):
    """Execute the cells at the given page indexes in that order; leave skip unexecuted."""
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True)
    with client.setup_kernel():
        for i in order:
            if i not in skip:
                client.execute_cell(nb.cells[i], i)
    return nb


def titanic():
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell(
            "# Titanic 🚢 survival — first look\n"
            "\n"
            "Données d'exemple, 数据分析. The chart: ![chart.png](attachment:chart.png)",
            attachments={"chart.png": {"image/png": tiny_png()}},
        ),
        new_code_cell("import numpy as np\nimport pandas as pd\nfrom IPython.display import JSON"),
        new_code_cell(
            "df = pd.DataFrame({\n"
            "    \"Name\": [\"Braund\", \"Cumings\", \"Heikkinen\", \"Åberg\"],\n"
            "    \"Age\": [22.0, 38.0, np.nan, 26.0],\n"
            "    \"Fare\": [7.25, 71.2833, 7.925, 8.05],\n"
            "    \"Survived\": [0, 1, 1, 0],\n"
            "})\n"
            "df.head()",
            metadata={"tags": ["load"]},
        ),
        new_code_cell("print(f\"rows: {len(df)} ✅ <ok> & done\")\nprint(\"tab\\tsep\")"),
        new_code_cell("df[\"Agee\"].mean()"),
        new_code_cell("JSON({\"lr\": 1e-05, \"momentum\": 0.9, \"epochs\": 3, \"scale\": 1.0})"),
        new_code_cell(
            "%matplotlib inline\n"
            "import matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots(figsize=(1, 1), dpi=20)\n"
            "ax.bar([0, 1], df.groupby(\"Survived\").size())"
        ),
        new_code_cell("model.fit(df[[\"Age\", \"Fare\"]], df[\"Survived\"])"),
        new_raw_cell("raw: passed through untouched \\ \"quoted\""),
    ]
    nb.metadata["title"] = "Titanic"
    kernel_metadata(nb, "3.11.2")
    # Out of order: the loading cell was re-run last; the model cell never ran.
    run(nb, [1, 2, 3, 4, 5, 6, 2], skip=(7,))
    return nb


def legacy():
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell("## Old notebook\nWritten with nbformat 4.2: no cell ids."),
        new_code_cell("x = [i ** 2 for i in range(5)]\nx"),
        new_code_cell("0.1 + 0.2"),
        new_code_cell("import sys\nprint(\"warn\", file=sys.stderr)\ny = undefined_name + 1"),
        new_code_cell("total = sum(x)\n"),
    ]
    run(nb, [1, 2, 3], skip=(4,))
    nb.cells[1].metadata["collapsed"] = False
    nb.cells[2].metadata["scrolled"] = True
    for c in nb.cells:
        c.pop("id", None)
        c.metadata.pop("execution", None)
    nb.nbformat_minor = 2
    kernel_metadata(nb, "3.5.2")
    nb.metadata["kernelspec"]["display_name"] = "Python 3"
    return nb


def write(nb, name):
    path = os.path.join(HERE, name)
    nbformat.validate(nb)
    with open(path, "w", encoding="utf-8") as f:
        nbformat.write(nb, f, version=4)
    print("wrote", path)


write(titanic(), "titanic-nbformat45.ipynb")
write(legacy(), "legacy-nbformat42.ipynb")
