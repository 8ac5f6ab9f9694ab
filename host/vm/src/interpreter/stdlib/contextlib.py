"""The actor-VM subset of CPython's ``contextlib``.

``contextmanager`` (a generator function as a context manager: the
exception of the ``with`` block is thrown into the generator, as CPython's
``_GeneratorContextManager`` does, and the manager works as a decorator
too), ``suppress``, ``nullcontext``, ``closing``, ``ExitStack``
(``enter_context``, ``push``, ``callback``, ``pop_all``, ``close``),
``ContextDecorator`` and ``AbstractContextManager`` (a plain base class:
``__enter__`` returns self).

Differences: the exceptions of ``ExitStack`` callbacks are chained
(``__context__``) as nested ``with`` statements chain them, taking the
exception given to ``__exit__`` for the one being handled (CPython asks
``sys.exc_info()``, so a stack closed inside an ``except`` block without an
exception of its own chains a little differently); tracebacks are left as
the generator leaves them.  Left out: the async managers
(``asynccontextmanager``, ``aclosing``, ``AsyncExitStack``,
``AsyncContextDecorator``), ``redirect_stdout``/``redirect_stderr`` and
``chdir`` (no ``sys``, no files), ``AbstractContextManager``'s abstract
``__exit__``, its ``isinstance`` check by structure and its
``__class_getitem__``.
"""

from collections import deque
from functools import wraps


class AbstractContextManager:
    """A base class for context managers: ``__enter__`` returns ``self``."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class ContextDecorator:
    """A base class or mixin that enables context managers to work as decorators."""

    def _recreate_cm(self):
        return self

    def __call__(self, func):
        @wraps(func)
        def inner(*args, **kwds):
            with self._recreate_cm():
                return func(*args, **kwds)
        return inner


class _GeneratorContextManager(AbstractContextManager, ContextDecorator):
    """Helper for @contextmanager decorator."""

    def __init__(self, func, args, kwds):
        self.gen = func(*args, **kwds)
        self.func, self.args, self.kwds = func, args, kwds
        try:
            doc = func.__doc__
        except AttributeError:
            doc = None
        if doc is None:
            doc = type(self).__doc__
        self.__doc__ = doc

    def _recreate_cm(self):
        # one-shot managers: each call of a decorated function makes a new one
        return type(self)(self.func, self.args, self.kwds)

    def __enter__(self):
        # args and kwds are only needed for recreation, which is over
        del self.args, self.kwds, self.func
        try:
            return next(self.gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, typ, value, traceback):
        if typ is None:
            try:
                next(self.gen)
            except StopIteration:
                return False
            else:
                try:
                    raise RuntimeError("generator didn't stop")
                finally:
                    self.gen.close()
        else:
            if value is None:
                # an instance, so that the same exception can be recognised
                value = typ()
            try:
                self.gen.throw(value)
            except StopIteration as exc:
                # a StopIteration raised in the with block is not suppressed
                return exc is not value
            except RuntimeError as exc:
                if exc is value:
                    return False
                # a StopIteration thrown in and turned into RuntimeError (PEP 479)
                if isinstance(value, StopIteration) and exc.__cause__ is value:
                    return False
                raise
            except BaseException as exc:
                # __exit__ must not raise the exception it was given
                if exc is not value:
                    raise
                return False
            try:
                raise RuntimeError("generator didn't stop after throw()")
            finally:
                self.gen.close()


def contextmanager(func):
    """@contextmanager: a generator function that yields once becomes a
    function returning a context manager (the code before the yield is
    ``__enter__``, the value yielded is what ``as`` binds, the code after
    it is ``__exit__``; an exception of the ``with`` block is raised at the
    yield)."""
    @wraps(func)
    def helper(*args, **kwds):
        return _GeneratorContextManager(func, args, kwds)
    return helper


class closing(AbstractContextManager):
    """``with closing(thing) as t:`` calls ``thing.close()`` at the end."""

    def __init__(self, thing):
        self.thing = thing

    def __enter__(self):
        return self.thing

    def __exit__(self, *exc_info):
        self.thing.close()


class suppress(AbstractContextManager):
    """``with suppress(KeyError):`` ignores those exceptions in its block."""

    def __init__(self, *exceptions):
        self._exceptions = exceptions

    def __enter__(self):
        pass

    def __exit__(self, exctype, excinst, exctb):
        return exctype is not None and issubclass(exctype, self._exceptions)


class nullcontext(AbstractContextManager):
    """A context manager that does nothing: ``with nullcontext(x) as y``
    binds ``x``."""

    def __init__(self, enter_result=None):
        self.enter_result = enter_result

    def __enter__(self):
        return self.enter_result

    def __exit__(self, *excinfo):
        pass


def _exit_wrapper(cm, cm_exit):
    def exit_(exc_type, exc, tb):
        return cm_exit(cm, exc_type, exc, tb)
    return exit_


def _callback_wrapper(callback, args, kwds):
    def exit_(exc_type, exc, tb):
        callback(*args, **kwds)
    return exit_


def _fix_exception_context(new_exc, old_exc, frame_exc):
    # Point the end of new_exc's context chain at old_exc, as if the
    # callbacks were nested with statements.
    while True:
        exc_context = new_exc.__context__
        if exc_context is None or exc_context is old_exc:
            return
        if exc_context is frame_exc:
            break
        new_exc = exc_context
    new_exc.__context__ = old_exc


class ExitStack(AbstractContextManager):
    """Context manager for dynamic management of a stack of exit callbacks."""

    def __init__(self):
        self._exit_callbacks = deque()

    def pop_all(self):
        """Move the callbacks to a new stack (this one is left empty)."""
        new_stack = type(self)()
        new_stack._exit_callbacks = self._exit_callbacks
        self._exit_callbacks = deque()
        return new_stack

    def push(self, exit):
        """Register an ``__exit__``-like callback, or an object's ``__exit__``."""
        try:
            exit_method = type(exit).__exit__
        except AttributeError:
            # not a context manager: a callable
            self._exit_callbacks.append(exit)
        else:
            self._exit_callbacks.append(_exit_wrapper(exit, exit_method))
        return exit

    def enter_context(self, cm):
        """Enter ``cm``, register its ``__exit__`` and return what ``__enter__`` returned."""
        cls = type(cm)
        try:
            enter = cls.__enter__
            exit_ = cls.__exit__
        except AttributeError:
            raise TypeError(f"'{cls.__module__}.{cls.__qualname__}' object does "
                            f"not support the context manager protocol") from None
        result = enter(cm)
        self._exit_callbacks.append(_exit_wrapper(cm, exit_))
        return result

    def callback(self, callback, /, *args, **kwds):
        """Register ``callback(*args, **kwds)`` (it cannot suppress exceptions)."""
        wrapper = _callback_wrapper(callback, args, kwds)
        wrapper.__wrapped__ = callback
        self._exit_callbacks.append(wrapper)
        return callback

    def __enter__(self):
        return self

    def __exit__(self, *exc_details):
        received_exc = exc_details[0] is not None
        frame_exc = exc_details[1]
        suppressed_exc = False
        pending_raise = False
        while self._exit_callbacks:
            cb = self._exit_callbacks.pop()
            try:
                if cb(*exc_details):
                    suppressed_exc = True
                    pending_raise = False
                    exc_details = (None, None, None)
            except BaseException as exc:
                _fix_exception_context(exc, exc_details[1], frame_exc)
                pending_raise = True
                exc_details = (type(exc), exc, exc.__traceback__)
        if pending_raise:
            fixed_ctx = exc_details[1].__context__
            try:
                raise exc_details[1]
            except BaseException:
                # a bare raise here would replace the context set up above
                exc_details[1].__context__ = fixed_ctx
                raise
        return received_exc and suppressed_exc

    def close(self):
        """Unwind the stack now."""
        self.__exit__(None, None, None)
