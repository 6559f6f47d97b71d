"""The quality bar an int8 build must meet: cosine against the packaged model on fixed texts.

A build is kept only when its embeddings of `QUALITY_SENTENCES` reach mean cosine `MIN_MEAN_COSINE`
and at least `MIN_COSINE` for every text against the model it was built from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragdown.indexing.embedders.base import Embedder

MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.98

# Fixed, varied texts for the quality check: prose, questions, code, lists, numbers, other languages,
# one-word and long inputs (the long ones run well past 128 tokens).
QUALITY_SENTENCES: tuple[str, ...] = (
    "How do I declare a path parameter with a type in FastAPI?",
    "Ownership rules in Rust: each value has a single owner, and the value is dropped when the owner "
    "goes out of scope.",
    "The cat slept on the warm windowsill all afternoon.",
    "Quarterly revenue rose 12% to $4.3 billion, beating analyst expectations.",
    "def add(a: int, b: int) -> int:\n    return a + b",
    'fn main() {\n    let v = vec![1, 2, 3];\n    println!("{:?}", v);\n}',
    "SELECT name, count(*) FROM users GROUP BY name HAVING count(*) > 1;",
    "kubectl rollout restart deployment/ragdown -n search",
    "Error: EACCES: permission denied, open '/etc/hosts'",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The meeting has been moved to Thursday at 3 pm in room 4B.",
    "Le chat dort sur le canapé depuis ce matin.",
    "Der Zug nach Berlin hat zwanzig Minuten Verspätung.",
    "東京は日本の首都です。",
    "Wie viele Einwohner hat München?",
    "Dependencies are declared in Cargo.toml under the [dependencies] table.",
    "- install the package\n- run the migrations\n- restart the service",
    "# Installation\n\nRun `pip install ragdown` and then `ragdown serve ~/notes`.",
    "Why does my Docker container exit immediately after starting?",
    "Pydantic models validate request bodies and return a 422 response on invalid input.",
    "Borrowing lets a function use a value without taking ownership of it.",
    "The mitochondria is the powerhouse of the cell.",
    "She sold seashells by the seashore on a sunny Sunday.",
    "Use async def for path operations that await I/O, and plain def for blocking code.",
    "A trait defines shared behaviour that types can implement.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
    "Backups run nightly at 02:00 UTC and are kept for thirty days.",
    "OAuth2 with password flow and bearer tokens, using JWT for the access token.",
    "thanks!",
    "pagination",
    "What is the difference between a process and a thread?",
    "The stock market fell sharply after the central bank raised interest rates.",
    "Tokio is an asynchronous runtime for the Rust programming language.",
    "The quick brown fox jumps over the lazy dog.",
    "Patch notes: fixed a crash when the config file is empty; improved startup time by 30 percent.",
    "To reset your password, click 'Forgot password' on the sign-in page and follow the emailed link.",
    "| name | type | default |\n|------|------|---------|\n| port | int  | 8000    |",
    "HTTP 404 Not Found: the requested resource does not exist on this server.",
    "Lifetimes ensure that references are valid as long as they are used.",
    "Climate change is raising sea levels and making heatwaves more frequent.",
    "The orchestra performed Beethoven's Ninth Symphony to a sold-out hall.",
    "import numpy as np\nx = np.linspace(0, 1, 11)\nprint(x.mean())",
    "Dependency injection in FastAPI: declare a parameter with Depends() and the framework calls it "
    "for you, caching the result for the duration of the request.",
    "Pattern matching with match arms must be exhaustive: every possible value of the type has to be "
    "covered, or the compiler reports which cases are missing.",
    "Background tasks run after the response has been sent, which suits sending an email or writing a "
    "log line without making the client wait.",
    "The garden needs watering twice a week in summer, more often when the soil is sandy.",
    # Long inputs (about 150-250 tokens).
    " ".join(
        [
            "Smart pointers such as Box, Rc and RefCell give Rust programs heap allocation, shared "
            "ownership and interior mutability.",
            "Box stores a value on the heap and is useful for recursive types whose size is not known at "
            "compile time.",
            "Rc counts references so that several owners can read the same data, and the value is "
            "dropped when the last owner goes away.",
            "RefCell moves the borrowing rules from compile time to run time and panics when they are "
            "broken.",
            "Combining Rc and RefCell gives multiple owners of mutable data, at the price of checks that "
            "happen while the program runs.",
        ]
    ),
    " ".join(
        [
            "FastAPI generates an OpenAPI schema from your path operations, parameters and Pydantic "
            "models, and serves interactive documentation at /docs and /redoc.",
            "Each endpoint's request body, query parameters, headers and cookies are described with "
            "their types and validation rules, so clients can be generated automatically.",
            "You can add tags, summaries, descriptions and examples to enrich the schema, hide "
            "endpoints from it, or change the URL where it is served.",
            "Security schemes such as OAuth2 and API keys are also part of the schema, which lets the "
            "documentation page offer an Authorize button.",
        ]
    ),
    " ".join(
        [
            "The expedition left base camp before dawn, climbing through fresh snow toward the ridge.",
            "By noon the wind had picked up and the guides decided to turn back rather than risk the "
            "exposed traverse.",
            "They reached the tents in the late afternoon, tired but safe, and spent the evening melting "
            "snow for water and checking the forecast for a better window later in the week.",
            "Two days later the weather cleared and the team made the summit in under seven hours.",
        ]
    ),
    " ".join(
        [
            "version: 2.1\njobs:\n  test:\n    docker:\n      - image: python:3.11\n    steps:\n",
            "      - checkout\n      - run: pip install -e .[test]\n      - run: pytest -q\n",
            "workflows:\n  main:\n    jobs:\n      - test\n",
            "This configuration runs the test suite on every push inside a Python 3.11 container.",
        ]
    ),
)


@dataclass(frozen=True)
class QualityReport:
    """Cosine between reference and candidate embeddings of the same texts."""

    mean: float
    minimum: float
    count: int

    @property
    def passed(self) -> bool:
        return self.mean >= MIN_MEAN_COSINE and self.minimum >= MIN_COSINE

    def __str__(self) -> str:
        return f"cosine mean {self.mean:.4f}, min {self.minimum:.4f} over {self.count} texts"


def cosine_report(expected: npt.NDArray[np.float32], actual: npt.NDArray[np.float32]) -> QualityReport:
    """Row-by-row cosine of two sets of unit vectors."""
    cosines = np.sum(expected.astype(np.float64) * actual.astype(np.float64), axis=1)
    return QualityReport(float(cosines.mean()), float(cosines.min()), int(cosines.size))


def compare_embeddings(
    reference: Embedder, candidate: Embedder, texts: Sequence[str] = QUALITY_SENTENCES
) -> QualityReport:
    """Embed `texts` with both as documents and compare them row by row."""
    return cosine_report(reference.embed(list(texts), "document"), candidate.embed(list(texts), "document"))


class QualityCheck:
    """Compares a candidate model file with the reference embedder (embedded once, on first use)."""

    def __init__(
        self,
        reference: Callable[[], Embedder],
        load: Callable[[Path], Embedder],
        texts: Sequence[str] = QUALITY_SENTENCES,
    ) -> None:
        self._reference = reference
        self._load = load
        self._texts = list(texts)
        self._expected: npt.NDArray[np.float32] | None = None

    def __call__(self, candidate: Path) -> QualityReport:
        if self._expected is None:
            reference = self._reference()
            try:
                self._expected = reference.embed(self._texts, "document")
            finally:
                reference.close()
        embedder = self._load(candidate)
        try:
            return cosine_report(self._expected, embedder.embed(self._texts, "document"))
        finally:
            embedder.close()
