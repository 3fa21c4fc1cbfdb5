"""Defining rewards: the ``@reward`` decorator, the reward object it makes, and ``BaseReward``.

The reward's signature is bound once, at definition: each call only picks the declared
fields out of the sample, calls the function and validates what it returned.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import importlib.util
import inspect
import operator
import os
import pickle
import sys
import types
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, TypeVar, overload

from rewardkit.runtime.define.errors import MissingFieldError
from rewardkit.runtime.define.fields import PREDEFINED_FIELDS, framework_hint
from rewardkit.runtime.define.options import ExecutionMode, check_reward_options
from rewardkit.runtime.define.registry import Registration, register
from rewardkit.runtime.define.results import RewardResult

RewardCallable = Callable[..., Any]
F = TypeVar("F", bound=RewardCallable)

_from_raw = RewardResult.from_raw
_new_dict = dict.__new__
_dict_set = dict.__setitem__


class FieldBinding:
    """Which fields a reward receives, worked out once from its signature.

    ``select(fields)`` returns the keyword arguments for one call: the declared parameters
    present in ``fields`` (every field when the reward takes ``**kwargs``), or raises
    ``MissingFieldError`` when a required one is absent.
    """

    __slots__ = (
        "accepts_all",
        "by_position",
        "location",
        "optional",
        "parameters",
        "required",
        "reward_name",
    )

    def __init__(
        self, function: Callable[..., Any], reward_name: str, *, skip_first: bool = False
    ) -> None:
        self.reward_name = reward_name
        self.location = _source_location(function)
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"reward {reward_name!r}: cannot read the signature of {function!r}: {exc}"
            ) from exc
        params = list(signature.parameters.values())
        if skip_first and params:
            params = params[1:]
        required: list[str] = []
        optional: list[str] = []
        accepts_all = False
        for param in params:
            if param.kind is param.POSITIONAL_ONLY:
                raise TypeError(
                    f"reward {reward_name!r} ({self.location}): parameter {param.name!r} is "
                    "positional-only, but fields are passed by name; remove the '/'"
                )
            if param.kind is param.VAR_KEYWORD:
                accepts_all = True
            elif param.kind is param.VAR_POSITIONAL:
                continue
            elif param.default is param.empty:
                required.append(param.name)
            else:
                optional.append(param.name)
        self.required = tuple(required)
        self.optional = tuple(optional)
        self.parameters = tuple(
            p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        )
        self.accepts_all = accepts_all
        # Every parameter required and positional-or-keyword: fields can be passed by position.
        self.by_position = (
            not accepts_all
            and not optional
            and all(
                p.kind is p.POSITIONAL_OR_KEYWORD for p in params if p.kind is not p.VAR_POSITIONAL
            )
        )

    def select(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments for one call of the reward, taken from ``fields``."""
        if self.accepts_all:
            for name in self.required:
                if name not in fields:
                    raise self.missing_field_error(fields)
            return dict(fields)
        try:
            kwargs = {name: fields[name] for name in self.required}
        except KeyError:
            raise self.missing_field_error(fields) from None
        for name in self.optional:
            if name in fields:
                kwargs[name] = fields[name]
        return kwargs

    def missing_field_error(
        self,
        fields: Mapping[str, Any],
        *,
        unsupplied: Sequence[str] | None = None,
        batch_size: int | None = None,
    ) -> MissingFieldError:
        """The error for a call whose ``fields`` lack a required parameter of the reward; for a
        batch of ``batch_size`` samples, ``unsupplied`` are those no sample has (``fields``: the first)."""
        missing = (
            list(unsupplied)
            if unsupplied
            else [name for name in self.required if name not in fields]
        )
        available = sorted(fields)
        first = missing[0]
        listed = ", ".join(repr(name) for name in missing)
        supplier = (
            "the sample does not supply"
            if batch_size is None
            else f"none of the {batch_size} samples supplies (a configuration error, raised even with "
            'on_error="record")'
        )
        message = (
            f"reward {self.reward_name!r} ({self.location}) requires field{'s' if len(missing) > 1 else ''} "
            f"{listed}, which {supplier}; available fields{'' if batch_size is None else ' of samples[0]'}: "
            f"{', '.join(available) if available else '(none)'}"
        )
        matches = difflib.get_close_matches(first, available, n=1, cutoff=0.6)
        suggestion = matches[0] if matches else None
        if suggestion is not None:
            message += (
                f". Did you mean {suggestion!r}? (rename the parameter {first!r} or the task field)"
            )
        elif first in PREDEFINED_FIELDS:
            message += f". {first!r} is a predefined field ({PREDEFINED_FIELDS[first]}) that the caller must pass"
        else:
            message += f". Add {first!r} to the task input or give the parameter a default"
        message += framework_hint(available)
        return MissingFieldError(
            message,
            reward_name=self.reward_name,
            parameter=first,
            available=available,
            suggestion=suggestion,
        )


def _origin(obj: Any) -> Any:
    """The function behind ``functools.partial`` layers (what a reader would call the reward)."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    return obj


def _code_of(obj: object) -> types.CodeType | None:
    """The code object of a function (through decorators and partials) or of a callable
    object's ``__call__``; ``None`` for builtins."""
    obj = _origin(obj)
    code = getattr(inspect.unwrap(obj), "__code__", None) if callable(obj) else None  # type: ignore[arg-type]
    if code is None and not inspect.isroutine(obj):
        code = getattr(inspect.getattr_static(type(obj), "__call__", None), "__code__", None)
    return code


def _source_location(obj: object) -> str:
    """``file:line`` where ``obj`` was defined, or its qualified name if unknown."""
    code = _code_of(obj)
    if code is None:
        return getattr(obj, "__qualname__", type(obj).__qualname__)
    return f"{code.co_filename}:{code.co_firstlineno}"


def _is_async_callable(function: object) -> bool:
    """Whether calling ``function`` returns a coroutine (async functions, partials of them,
    and objects whose ``__call__`` is async)."""
    if inspect.iscoroutinefunction(function):
        return True
    call = type(function).__dict__.get("__call__") if not inspect.isroutine(function) else None
    return call is not None and inspect.iscoroutinefunction(call)


def _definition_line(obj: object) -> int:
    code = _code_of(obj)
    return code.co_firstlineno if code is not None else 0


def _check_name(name: object, default: str) -> str:
    if name is None:
        return default
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"reward name must be a non-empty string, got {name!r} (for {default!r})")
    return name


def load_module_from_file(module: str, path: str) -> types.ModuleType:
    """The module ``module`` executed from ``path`` (once per process), as verl and OpenRLHF load
    reward files: by path, under a name that ``import`` may not find."""
    loaded = sys.modules.get(module)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(module, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load a module from {path}")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[module] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        del sys.modules[module]
        raise
    return loaded


def find_by_qualname(module: str, qualname: str) -> Any:
    """Import ``module`` and walk ``qualname``: how reward objects are found again after pickling."""
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def find_in_file(module: str, path: str, qualname: str) -> Any:
    """Load ``module`` from ``path`` (unless ``import`` finds it here) and walk ``qualname``: how
    a reward from a file loaded by path (verl's ``custom_module_<hash>``, OpenRLHF's
    ``reward_func``) is found again after pickling."""
    if module not in sys.modules and not importable(module):
        load_module_from_file(module, path)
    return find_by_qualname(module, qualname)


def importable(module: str) -> bool:
    """Whether ``import module`` would find it by its name in a fresh process: a package's
    submodule, or a name one of ``sys.meta_path``'s finders knows (``sys.path``, editable
    installs, builtins), whether or not it is imported here."""
    if "." in module:
        return True  # a package's submodule: its package is found by import, not by path
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            if find_spec(module, None) is not None:
                return True
        except Exception:  # a finder that fails on this name does not find it
            continue
    return False


def file_loaded_by_path(module: str | None, source: str | None = None) -> str | None:
    """The file another process loads ``module`` from when ``import`` cannot find it by name (verl
    and OpenRLHF load reward files by path): the module's ``__file__`` if it is in ``sys.modules``,
    else ``source`` (the file defining the object: verl does not register the module); ``None``
    for a module ``import`` finds, ``__main__``, or one without a file."""
    if not module or "." in module or module == "__main__":
        return None
    loaded = sys.modules.get(module)
    path = getattr(loaded, "__file__", None) if loaded is not None else source
    if not isinstance(path, str) or not path.endswith(".py") or not os.path.isfile(path):
        return None
    return None if importable(module) else path


def source_file(obj: object) -> str | None:
    """The file that defines a function, a reward object's function, or a class (through its
    methods), as its code says; ``None`` when there is none."""
    if isinstance(obj, type):
        for member in vars(obj).values():
            code = getattr(member, "__code__", None)
            if code is not None:
                return code.co_filename  # type: ignore[no-any-return]
        return None
    code = _code_of(obj)
    return code.co_filename if code is not None else None


class Reward:
    """A reward function bound once to its fields; what ``@reward`` returns.

    Call it with the sample's fields as keyword arguments: it passes each declared parameter
    its field and returns a validated ``RewardResult`` (a coroutine of one if the function is
    async). ``.name``, ``.is_async``, ``.parameters`` and ``__wrapped__`` describe it.
    """

    name: str
    is_async: bool
    parameters: tuple[str, ...]
    none_as_zero: bool
    extra_keys: tuple[str, ...] | Mapping[str, Any] | None
    registration: Registration
    execution: ExecutionMode | None
    timeout: float | None
    __wrapped__: RewardCallable

    def __init__(
        self,
        function: RewardCallable,
        *,
        name: str | None = None,
        execution: ExecutionMode | None = None,
        timeout: float | None = None,
        auto_register: bool = True,
        none_as_zero: bool = False,
        extra_keys: Sequence[str] | Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(function):
            raise TypeError(f"@reward needs a function, got {function!r}")
        if isinstance(function, Reward):  # re-decorating (e.g. to rename): wrap the function itself
            function = function.__wrapped__
        default_name = getattr(function, "__name__", type(function).__name__)
        functools.update_wrapper(self, function)
        self.name = _check_name(name, default_name)
        self.is_async = _is_async_callable(function)
        self.none_as_zero = none_as_zero
        self.extra_keys = _declared_extra_keys(extra_keys, self.name)
        self.binding = FieldBinding(function, self.name)
        self.parameters = self.binding.parameters
        self.execution, self.timeout = check_reward_options(
            self.name, self.is_async, execution, timeout
        )
        # calculate_reward's fast path: is_async for a reward called as is, None for one that
        # runs elsewhere or under a timeout (one attribute read per call, not three)
        self.direct: bool | None = (
            self.is_async if self.execution is None and self.timeout is None else None
        )
        self.invoke = self._make_invoke(function)
        self.registration = Registration(
            name=self.name,
            reward=self,
            module=getattr(_origin(function), "__module__", None) or "__main__",
            qualname=getattr(_origin(function), "__qualname__", default_name),
            line=_definition_line(function),
        )
        if auto_register:
            register(self.registration)

    def _make_invoke(self, function: RewardCallable) -> Callable[[Mapping[str, Any]], Any]:
        """Build the per-call path once: take the fields, call, validate (all bound as locals).

        The common shape (every parameter required, none keyword-only) takes the fields with
        one C-level ``itemgetter`` and calls by position; a finite float result skips the
        general validation. This keeps the path within about a microsecond of a direct call.
        """
        binding = self.binding
        select = binding.select
        missing_field_error = binding.missing_field_error
        name = self.name
        none_as_zero = self.none_as_zero
        from_raw = _from_raw
        make_result = _new_dict
        set_item = _dict_set
        result_class = RewardResult
        if self.is_async:

            def invoke_async(fields: Mapping[str, Any]) -> Coroutine[Any, Any, RewardResult]:
                return _validate_later(function(**select(fields)), name, none_as_zero)

            return invoke_async

        if binding.by_position and len(binding.required) >= 2:
            take_fields = operator.itemgetter(*binding.required)

            def invoke_by_position(fields: Mapping[str, Any]) -> RewardResult:
                try:
                    values = take_fields(fields)
                except KeyError:
                    raise missing_field_error(fields) from None
                raw = function(*values)
                if raw.__class__ is float and raw - raw == 0.0:
                    result = make_result(result_class)
                    set_item(result, "reward", raw)
                    return result  # type: ignore[no-any-return]
                return from_raw(raw, reward_name=name, none_as_zero=none_as_zero)

            return invoke_by_position

        if binding.by_position and len(binding.required) == 1:
            (only_field,) = binding.required

            def invoke_one(fields: Mapping[str, Any]) -> RewardResult:
                try:
                    value = fields[only_field]
                except KeyError:
                    raise missing_field_error(fields) from None
                raw = function(value)
                if raw.__class__ is float and raw - raw == 0.0:
                    result = make_result(result_class)
                    set_item(result, "reward", raw)
                    return result  # type: ignore[no-any-return]
                return from_raw(raw, reward_name=name, none_as_zero=none_as_zero)

            return invoke_one

        def invoke(fields: Mapping[str, Any]) -> RewardResult:
            raw = function(**select(fields))
            if raw.__class__ is float and raw - raw == 0.0:
                result = make_result(result_class)
                set_item(result, "reward", raw)
                return result  # type: ignore[no-any-return]
            return from_raw(raw, reward_name=name, none_as_zero=none_as_zero)

        return invoke

    def __call__(self, *args: Any, **fields: Any) -> Any:
        if args:
            raise _positional_call_error(self.name, len(args))
        return self.invoke(fields)

    def __repr__(self) -> str:
        kind = "async reward" if self.is_async else "reward"
        return f"<{kind} {self.name!r} ({', '.join(self.parameters)}) at {self.binding.location}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Found again by module and qualified name, so rewards travel to worker processes.
        qualname = self.__dict__.get("__qualname__")
        if qualname is None or "<locals>" in qualname:
            what = (
                "is defined inside a function"
                if qualname
                else "wraps a callable that is not a function"
            )
            raise pickle.PicklingError(
                f"reward {self.name!r} ({self.binding.location}) {what} and cannot be found again "
                "in another process; decorate a function defined at module level"
            )
        return reduce_by_reference(self.__module__, qualname, source_file(self.__wrapped__))


def reduce_by_reference(module: str, qualname: str, source: str | None = None) -> tuple[Any, ...]:
    """How a reward object pickles: by module and qualified name, and by the file its module was
    loaded from when ``import`` cannot find that module (another process loads it the same way;
    ``source``: the file defining it, for a module loaded by path but not registered)."""
    path = file_loaded_by_path(module, source)
    if path is not None:
        return (find_in_file, (module, path, qualname))
    return (find_by_qualname, (module, qualname))


@overload
def reward(function: F, /) -> Reward: ...
@overload
def reward(
    name: str | None = None,
    /,
    *,
    auto_register: bool = True,
    none_as_zero: bool = False,
    extra_keys: Sequence[str] | Mapping[str, Any] | None = None,
    execution: ExecutionMode | None = None,
    timeout: float | None = None,
) -> Callable[[F], Reward]: ...
@overload
def reward(
    *,
    name: str | None = None,
    auto_register: bool = True,
    none_as_zero: bool = False,
    extra_keys: Sequence[str] | Mapping[str, Any] | None = None,
    execution: ExecutionMode | None = None,
    timeout: float | None = None,
) -> Callable[[F], Reward]: ...
def reward(
    function_or_name: Any = None,
    /,
    *,
    name: str | None = None,
    auto_register: bool = True,
    none_as_zero: bool = False,
    extra_keys: Sequence[str] | Mapping[str, Any] | None = None,
    execution: ExecutionMode | None = None,
    timeout: float | None = None,
) -> Any:
    """Make a reward from a function: ``@reward``, ``@reward()`` or ``@reward(name="...")``.

    ``auto_register=False`` keeps it out of the registry (``get_reward``);
    ``none_as_zero=True`` turns a returned ``None`` into 0.0 (AgentFly's legacy behaviour)
    instead of raising ``RewardShapeError``. ``extra_keys`` declares the extras every sample
    carries (names, or name -> type), when its returns do not show them (``rewardkit.runtime.define.schema``).
    ``execution`` (``"inline"``, ``"thread"`` or ``"process"``) and ``timeout`` (seconds per
    call) are how the reward runs unless the caller says otherwise (``calculate_rewards``, the
    adapters, the pytest plugin): a reward whose grader uses signals (math_verify) declares
    ``execution="process"``.
    """
    options: dict[str, Any] = {
        "auto_register": auto_register,
        "none_as_zero": none_as_zero,
        "extra_keys": extra_keys,
        "execution": execution,
        "timeout": timeout,
    }
    if callable(function_or_name):
        return Reward(function_or_name, name=name, **options)
    if function_or_name is not None:
        name = _check_name(function_or_name, "reward")

    def decorate(function: RewardCallable) -> Reward:
        return Reward(function, name=name, **options)

    return decorate


def _class_definition_line(cls: type) -> int:
    """The line of the ``class`` statement, read from the frame that is executing it."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__") == cls.__module__:
            return frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return 0


class BaseReward:
    """Base class for rewards that keep state (credentials, clients) on the instance.

    Subclasses set a class attribute ``name`` (default: the class name) and define
    ``call(self, ...)``, sync or async, declaring the fields it needs. The class is
    registered when it is defined; instances are called like reward objects. Subclasses
    need not call ``super().__init__()``. ``class R(BaseReward, auto_register=False)``
    stays out of the registry.
    """

    name: ClassVar[str] = ""
    is_async: ClassVar[bool] = False
    parameters: ClassVar[tuple[str, ...]] = ()
    none_as_zero: ClassVar[bool] = False
    extra_keys: ClassVar[Sequence[str] | Mapping[str, Any] | None] = None
    """The extras every sample carries, when ``call``'s returns do not show them (``rewardkit.runtime.define.schema``)."""
    binding: ClassVar[FieldBinding | None] = None
    registration: ClassVar[Registration | None] = None
    execution: ClassVar[ExecutionMode | None] = None
    """How the reward runs unless the caller says otherwise (see ``@reward``)."""
    timeout: ClassVar[float | None] = None
    """Seconds per call unless the caller says otherwise (see ``@reward``)."""

    def __init_subclass__(cls, *, auto_register: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        call = getattr(cls, "call", None)
        if call is None or call is BaseReward.call:
            return  # an intermediate base without call(): nothing to bind or register
        if "name" not in cls.__dict__:
            cls.name = cls.__name__
        cls.name = _check_name(cls.name, cls.__name__)
        cls.extra_keys = _declared_extra_keys(cls.extra_keys, cls.name)
        cls.is_async = inspect.iscoroutinefunction(call)
        cls.execution, cls.timeout = check_reward_options(
            cls.name, cls.is_async, cls.execution, cls.timeout
        )
        cls.binding = FieldBinding(call, cls.name, skip_first=True)
        cls.parameters = cls.binding.parameters
        cls.registration = Registration(
            name=cls.name,
            reward=cls,
            module=cls.__module__,
            qualname=cls.__qualname__,
            line=_class_definition_line(cls) or _definition_line(call),
        )
        if auto_register:
            register(cls.registration)

    def call(self, **fields: Any) -> Any:
        """Compute the reward from the declared fields; subclasses override it."""
        raise NotImplementedError(f"{type(self).__qualname__} must define call(self, ...)")

    def invoke(self, fields: Mapping[str, Any]) -> Any:
        """Select the declared fields, call ``call`` and validate (a coroutine if async)."""
        cls = self.__class__
        binding = cls.binding
        if binding is None:
            raise TypeError(f"{cls.__qualname__} is a BaseReward without a call(self, ...) method")
        raw = self.call(**binding.select(fields))
        if cls.is_async:
            return _validate_later(raw, cls.name, cls.none_as_zero)
        return _from_raw(raw, reward_name=cls.name, none_as_zero=cls.none_as_zero)

    def __call__(self, *args: Any, **fields: Any) -> Any:
        if args:
            raise _positional_call_error(self.name, len(args))
        return self.invoke(fields)


async def _validate_later(
    pending: Coroutine[Any, Any, Any], name: str, none_as_zero: bool
) -> RewardResult:
    """Await an async reward's coroutine and validate what it returned."""
    return _from_raw(await pending, reward_name=name, none_as_zero=none_as_zero)


def _declared_extra_keys(
    extra_keys: Sequence[str] | Mapping[str, Any] | None, name: str
) -> tuple[str, ...] | Mapping[str, Any] | None:
    """A reward's declared ``extra_keys`` as an immutable value (names, or name -> type);
    ``rewardkit.runtime.define.schema`` validates the names when a schema is built."""
    if extra_keys is None:
        return None
    if isinstance(extra_keys, (str, bytes)):
        raise TypeError(
            f"reward {name!r}: extra_keys must be a list of names, not the string {extra_keys!r}"
        )
    if isinstance(extra_keys, Mapping):
        return types.MappingProxyType(dict(extra_keys))
    return tuple(extra_keys)


def _positional_call_error(name: str, count: int) -> TypeError:
    return TypeError(
        f"reward {name!r} takes fields by keyword only (got {count} positional "
        f"argument{'s' if count > 1 else ''}); call it as {name}(final_response=..., ...). A framework "
        "that calls its reward positionally (OpenRLHF's reward_func(queries, prompts, labels), verl's "
        "prime manager) takes a rewardkit reward through its adapter: rewardkit.adapters.to_openrlhf / "
        "to_verl / to_trl (see docs/adapters.md)"
    )


_plain_rewards: weakref.WeakKeyDictionary[Any, Reward] = weakref.WeakKeyDictionary()


def is_group_reward(reward: object) -> bool:
    """Whether ``reward`` scores groups of samples (a ``GroupReward``, a composition with one):
    its class says so with ``is_group = True`` (this module cannot import the group rewards')."""
    return getattr(type(reward), "is_group", False) is True


def as_reward(reward_fn: Any) -> Reward | BaseReward:
    """Normalize any reward: a reward object or ``BaseReward`` instance as is, a plain callable
    wrapped once (not registered). A ``BaseReward`` class is an error: it needs its state."""
    if isinstance(reward_fn, (Reward, BaseReward)):
        return reward_fn
    if is_group_reward(reward_fn):  # scored by groups: rewardkit.runtime.define.group_rewards
        return reward_fn  # type: ignore[no-any-return]
    if isinstance(reward_fn, type) and issubclass(reward_fn, BaseReward):
        raise TypeError(
            f"got the class {reward_fn.__qualname__} (reward {reward_fn.name!r}); pass an instance, "
            f"e.g. {reward_fn.__qualname__}(...)"
        )
    if not callable(reward_fn):
        raise TypeError(
            f"expected a reward (a function, @reward object or BaseReward instance), got {reward_fn!r}"
        )
    try:
        cached = _plain_rewards.get(reward_fn)
    except TypeError:  # not weak-referenceable or unhashable: wrap every time
        return Reward(reward_fn, auto_register=False)
    if cached is None:
        cached = Reward(reward_fn, auto_register=False)
        with contextlib.suppress(TypeError):
            _plain_rewards[reward_fn] = cached
    return cached
