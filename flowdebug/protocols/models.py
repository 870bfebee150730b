"""Model names per vendor: a model id is never carried into another vendor.

Each vendor's facts say which model ids are its own (``Facts.model_ids``, a pattern: Anthropic's
``claude-*``, Bedrock's provider ids ``anthropic.claude-*`` / ``us.amazon.nova-*`` ...). When a
conversation names a model and is encoded for a vendor:

- the vendor's own id is kept;
- a vendor whose API local servers speak (``Facts.local_servers``: OpenAI Chat) keeps every
  id: an unclaimed one is a local model (``llama3``, ``qwen2.5:7b``), and the other vendors'
  ids are what their own OpenAI-compatible endpoints take (Gemini's ``/v1beta/openai`` takes
  ``gemini-3-pro-preview``), so such a body goes back unchanged;
- an id no registered vendor claims is kept too: a codec cannot tell it from a model a person
  chose for this vendor (a live player's model field, a gateway's alias, a model newer than
  the patterns, the emulator's ``error-404``), and replacing that would send another model
  than the one asked for;
- another vendor's id is replaced by the vendor's choice: the session's choice for that
  vendor when there is one, else the vendor's default model (its facts), and one
  ``model_replaced`` warning says which replaced which;
- a source that names no model gets the session's choice for the vendor, when there is one
  (else the codec fills in the vendor's default, and says so where the vendor requires one).

The session's choice is passed as ``chosen``, or for a whole encoding (every codec call
inside) by :func:`choosing`, so the codecs' signatures stay dicts in, dicts out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from flowdebug.protocols.base import PROTOCOLS, Warnings, known

_CHOSEN: ContextVar[Mapping[str, str] | None] = ContextVar("flowdebug_models", default=None)


@contextmanager
def choosing(models: Mapping[str, str] | None) -> Iterator[None]:
    """Encode, inside, with a session's model per vendor (protocol name -> model id)."""
    token = _CHOSEN.set(dict(models or {}))
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def owners(model: str) -> list[str]:
    """The registered vendors whose facts claim ``model`` as theirs, in registry order."""
    return [n for n, c in PROTOCOLS.items() if c.facts.model_ids and c.facts.model_ids.match(model)]


def keeps(protocol: str, model: str) -> bool:
    """Whether ``protocol`` sends ``model`` as it is (see the module's rules)."""
    facts = known(protocol)
    if facts.local_servers or (facts.model_ids is not None and facts.model_ids.match(model)):
        return True
    return not owners(model)


def own_model(
    model: str | None,
    w: Warnings,
    chosen: Mapping[str, str] | None = None,
    where: str = "",
) -> str | None:
    """The model the vendor of ``w`` names for a source that names ``model``: ``model``
    itself when the vendor keeps it (or None when the source names none: the codec fills its
    own in), else the vendor's choice (``chosen[vendor]``, else its default model), with one
    ``model_replaced`` warning in ``w``; a source naming no model gets the vendor's choice
    (None without one). ``chosen``: the session's choice, else :func:`choosing`'s. ``where``
    ends the warning (a vendor naming the model in the URL says so; ``{model}`` in it is the
    model sent)."""
    protocol = w.protocol
    mine = (chosen if chosen is not None else _CHOSEN.get() or {}).get(protocol)
    if model is None:
        return mine
    if keeps(protocol, model):
        return model
    facts = known(protocol)
    new = mine or facts.default_model
    if new is None:
        return model
    whose = f"{model} names a model of {known(owners(model)[0]).short}"  # claimed: see keeps
    source = "the session's choice for it" if mine else "its default"
    tail = where.format(model=new)
    w.add(
        "model_replaced",
        "model",
        f"{whose}, not of {facts.short}: {new} ({source}) replaced it{tail}",
    )
    return new


def model_for(protocol: str, model: str | None, chosen: Mapping[str, str] | None = None) -> str:
    """The model a request for ``protocol`` names (in its body, or its URL where the vendor
    puts it there) for a source that names ``model``: :func:`own_model`, else the vendor's
    default. The encoded request's warnings say what was replaced."""
    mine = own_model(model, Warnings(protocol), chosen)
    return mine or (chosen or {}).get(protocol) or known(protocol).default_model or "default"
