"""Small PyTorch helpers that the algorithms share: Adam, target-network updates, the
networks' :class:`MLP` and the on-policy actors' draws. (Where a run trains, ``device``, is
the machinery's business: :mod:`spinup.machinery.device`.)"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# torch.optim.Adam(fused=True) takes CPU tensors from torch 2.4 on.
_TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
FUSED_ADAM_ON_CPU = _TORCH_VERSION >= (2, 4)

def adam(params, lr, fused=None):
    """Return ``torch.optim.Adam(params, lr=lr)``. On a GPU it is the fused Adam with
    ``capturable=True`` and a tensor step size, so that a CUDA graph can hold the step
    (docs/user/gpu.rst).

    Args:
        params: iterable of parameters (or parameter groups) to optimize.
        lr (float): learning rate, > 0.
        fused (bool or None): on the CPU, use the fused Adam (the same update in one kernel
            per step); ``None``: :data:`FUSED_ADAM_ON_CPU`.
    """
    params = list(params)
    tensors = [t for g in params for t in (g["params"] if isinstance(g, dict) else [g])]
    if tensors and tensors[0].is_cuda:
        return torch.optim.Adam(params, lr=torch.tensor(float(lr), device=tensors[0].device),
                                capturable=True, fused=True)
    fused = FUSED_ADAM_ON_CPU if fused is None else fused
    return torch.optim.Adam(params, lr=lr, fused=True if fused else None)


def set_lr(optimizer, value):
    """Set every parameter group's step size to ``value`` (float). A tensor step size (a
    GPU optimizer's, from :func:`adam`) is refilled in place, so that a CUDA graph holding
    the optimizer's step reads the new value."""
    for group in optimizer.param_groups:
        if torch.is_tensor(group["lr"]):
            group["lr"].fill_(value)
        else:
            group["lr"] = value


@torch.no_grad()
def polyak_update(net, net_targ, polyak):
    """``theta_targ <- polyak * theta_targ + (1 - polyak) * theta`` for every parameter
    (Lillicrap et al. 2016, Alg. 1); ``polyak = 0`` copies ``net`` (DQN's hard update).

    Args:
        net (torch.nn.Module): online network.
        net_targ (torch.nn.Module): target network with the same parameter layout.
        polyak (float): in ``[0, 1]``.
    """
    first = next(net.parameters(), None)
    if first is not None and first.is_cuda:   # one kernel for all, not one per tensor
        torch._foreach_lerp_(list(net_targ.parameters()), list(net.parameters()), 1.0 - polyak)
        return
    for p, p_targ in zip(net.parameters(), net_targ.parameters()):
        p_targ.lerp_(p, 1.0 - polyak)


class MLP(nn.Sequential):
    """An ``nn.Sequential`` whose ``forward`` skips the per-layer hook bookkeeping (acting
    runs it every env step): same layers, parameter names and results, but hooks on the
    inner layers do not fire (hooks on the ``MLP`` itself do)."""

    def forward(self, x):
        for layer in self:
            if type(layer) is nn.Linear:
                x = F.linear(x, layer._parameters["weight"], layer._parameters["bias"])
            else:
                x = layer.forward(x)
        return x


def sample_categorical(logits):
    """Draw ``a ~ Categorical(logits)`` and return ``(a, log p(a))``: the numbers and random
    stream of ``torch.distributions`` (tests/algos/test_acting.py) without building one per
    env step. Like ``torch.multinomial``, the draw is ``argmax_i p_i / E_i`` with
    ``E_i ~ Exp(1)`` (an "exponential race", which ``i`` wins with probability ``p_i``).

    Args:
        logits (torch.Tensor): unnormalised log-probabilities, (..., n_actions).

    Returns:
        tuple of torch.Tensor: actions (...,) as int64 and their log-probabilities (...,),
        non-finite for non-finite logits (check with :func:`finite_logp`).
    """
    logp_all = logits - logits.logsumexp(dim=-1, keepdim=True)
    p = torch.softmax(logp_all, dim=-1)
    a = (p / torch.empty_like(p).exponential_()).argmax(dim=-1, keepdim=True)
    return a.squeeze(-1), logp_all.gather(-1, a).squeeze(-1)


def sample_diag_gaussian(mu, log_std):
    """Draw ``a ~ N(mu, diag(exp(log_std))^2)`` and return ``(a, log p(a))``: the numbers of
    ``Normal(mu, std)``'s ``sample()`` and ``log_prob(a).sum(-1)``, without building one.

    Args:
        mu (torch.Tensor): means, (..., act_dim).
        log_std (torch.Tensor): log standard deviations, (act_dim,), broadcast over mu.

    Returns:
        tuple of torch.Tensor: actions (..., act_dim) and their log-densities (...,),
        non-finite for non-finite means (check with :func:`finite_logp`).

    Raises:
        ValueError: a NaN standard deviation (``torch.normal`` refuses it).
    """
    std = log_std.exp()
    try:
        a = torch.normal(mu, std.expand_as(mu))
    except RuntimeError:   # a NaN std
        raise ValueError(_DIVERGED) from None
    logp = -((a - mu) ** 2) / (2 * std ** 2) - std.log() - math.log(math.sqrt(2 * math.pi))
    return a, logp.sum(dim=-1)


def finite_logp(logp):
    """Return ``logp`` (a numpy array of log-probabilities from :func:`sample_categorical`
    or :func:`sample_diag_gaussian`); checked on numpy, cheaper than on the tensor.

    Raises:
        ValueError: a NaN or infinite entry (the policy's weights have diverged).
    """
    if not np.isfinite(logp).all():
        raise ValueError(_DIVERGED)
    return logp


_DIVERGED = ("the policy's output (logits, or mean and log std) is NaN or infinite: its "
             "weights have diverged (try a lower learning rate)")



# ---- Pixels: a convolutional torso in front of the MLP heads (DESIGN 21) ----

def is_image_space(space):
    """Whether ``space`` holds images: a 3-D ``Box`` of ``uint8`` or ``bool`` cells, channels
    first ``(C, H, W)`` or last ``(H, W, C)`` (Atari frames, MinAtar grids)."""
    return (type(space).__name__ == "Box" and len(space.shape) == 3
            and np.dtype(space.dtype) in (np.uint8, np.bool_))


class ConvTorso(nn.Module):
    """Images ``(batch, *shape)`` of any dtype to features ``(batch, width)``, float32.

    ``kind="nature"``: the Nature DQN's convolutions (Mnih et al. 2015: 32 8x8 stride 4,
    64 4x4 stride 2, 64 3x3 stride 1, each with a ReLU; frames of 36x36 at least, 84x84
    gives 3,136 features); ``"small"``: MinAtar's (Young & Tian 2019: 16 3x3 stride 1 and a
    ReLU; 10x10 gives 1,024); ``"auto"``: nature when both sides are >= 36, else small.
    Pixels are divided by the space's largest ``high`` here (buffers keep uint8/bool). The
    channel axis is the shorter end of the shape (on a tie the last, as in gymnasium).

    Raises:
        ValueError: an unknown ``kind``, or frames too small for ``"nature"``.
    """

    def __init__(self, observation_space, kind="auto"):
        super().__init__()
        shape = tuple(observation_space.shape)
        self.channels_last = shape[-1] <= shape[0]
        channels, *sides = (shape[-1], *shape[:2]) if self.channels_last else shape
        self.kind = ("nature" if min(sides) >= 36 else "small") if kind == "auto" else kind
        if self.kind == "nature" and min(sides) >= 36:
            layers = [nn.Conv2d(channels, 32, 8, stride=4), nn.ReLU(),
                      nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
                      nn.Conv2d(64, 64, 3, stride=1), nn.ReLU()]
        elif self.kind == "small":
            layers = [nn.Conv2d(channels, 16, 3, stride=1), nn.ReLU()]
        else:
            raise ValueError(f"ConvTorso: kind {kind!r} is not one of 'auto', 'nature' "
                             f"(frames of at least 36x36, not {sides}) or 'small'")
        self.convs = nn.Sequential(*layers, nn.Flatten())
        self.scale = 1.0 / float(np.max(observation_space.high))
        with torch.no_grad():
            self.width = int(self.convs(torch.zeros(1, channels, *sides)).shape[1])

    def forward(self, obs):
        single = obs.dim() == 3   # one image, no batch axis
        x = (obs.unsqueeze(0) if single else obs).to(torch.float32) * self.scale
        features = self.convs(x.permute(0, 3, 1, 2) if self.channels_last else x)
        return features.squeeze(0) if single else features


def conv_front(net, attribute, observation_space, kind="auto"):
    """Put a :class:`ConvTorso` before the MLP ``net.<attribute>`` (of its width's inputs)."""
    setattr(net, attribute, nn.Sequential(ConvTorso(observation_space, kind),
                                          getattr(net, attribute)))


def features_space(observation_space, kind="auto"):
    """The flat ``Box`` of a :class:`ConvTorso`'s features for ``observation_space``."""
    from gymnasium.spaces import Box
    return Box(-np.inf, np.inf, (ConvTorso(observation_space, kind).width,), np.float32)
