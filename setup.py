"""Install spinup. The CPU build of torch is used when already installed (``pip install
torch==2.13.0`` first on machines without a GPU); torch has no upper pin."""
import os.path as osp

from setuptools import find_packages, setup

here = osp.abspath(osp.dirname(__file__))
version = {}
with open(osp.join(here, "spinup", "version.py")) as f:
    exec(f.read(), version)

with open(osp.join(here, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="spinup",
    version=version["__version__"],
    description="Spinning Up in Deep RL, rebuilt on PyTorch, gymnasium 1.x and pip-installed MPI.",
    long_description=long_description,
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=find_packages(include=["spinup", "spinup.*"]),
    package_data={"spinup.presets": ["*.json"]},  # the presets ship with the package
    install_requires=[
        # The floor is the version CI runs (.ci/floors): older ones are not tested, and their
        # Linux wheels on PyPI bring the CUDA libraries, several GB, too big for CI to try.
        "torch>=2.13",
        "numpy>=1.24.1",  # seaborn 0.13 excludes 1.24.0
        "scipy>=1.10",
        "gymnasium>=1.1",  # gym.vector.AutoresetMode and reset_mask (PPO)
        "mpi4py>=4.1",  # the first with binary wheels (pip-installed MPI)
        "mpich",
        "matplotlib>=3.6.3",
        "pandas>=1.5.3",
        "seaborn>=0.13",
        "cloudpickle>=2.2",  # 2.2: the first that pickles Python 3.11 code
        "tqdm>=4.60",
        "psutil>=5.9.4",  # available memory; 5.9.4: the first with wheels for Python 3.11+
    ],
    extras_require={
        # gymnasium[box2d]: LunarLander resume tests (Box2D wheels from PyPI, no swig needed
        # on Python < 3.14).
        # pytest-xdist: the suite runs on every core (pyproject.toml's addopts).
        "test": ["pytest>=7", "pytest-timeout>=2.1", "pytest-xdist>=3.0",
                 "gymnasium[mujoco]>=1.1",
                 "gymnasium[box2d]>=1.1",
                 "moviepy>=1.0.0", "pygame-ce>=2.1.3", "tensorboard>=2.10",
                 # tests/docs/test_offline_docs.py builds the docs
                 "sphinx>=7", "sphinx-rtd-theme>=2.0", "django-static-mathjax>=3.2.2",
                 "ray>=2.9",
                 # tests/test_notebooks.py runs docs/notebooks in a kernel; the docs build
                 # (tests/docs) renders them with myst-nb.
                 "nbclient>=0.10", "ipykernel>=6.0", "nbformat>=5.9", "myst-nb>=1.1",
                 # tests/tracking: --track (W&B offline, MLflow SQLite), export and push
                 "wandb>=0.20", "mlflow>=3.1", "huggingface_hub>=1.0",
                 # tests/envs/test_mujoco_warp.py: the MuJoCo Warp tasks on Warp's CPU mode
                 "mujoco-warp>=4.0", "warp-lang>=1.19",
                 # tests/envs/test_pixels.py: Atari (ROMs in ale-py's wheel) and MinAtar
                 "ale-py>=0.12.1", "minatar>=1.0.15", "opencv-python-headless>=4.8"],
        # --env ALE/Pong-v5 and MinAtar/Breakout-v1 (spinup/envs/pixels.py); ale-py 0.12.0
        # shipped without ROMs, and gymnasium's AtariPreprocessing resizes with OpenCV.
        "pixels": ["ale-py>=0.12.1", "minatar>=1.0.15", "opencv-python-headless>=4.8"],
        # --launcher ray: grid variants as tasks on a Ray cluster (or a local instance).
        "ray": ["ray>=2.9"],
        # --track wandb|mlflow (tested with wandb 0.31.0 and mlflow 3.17.2; wandb 0.20 is the
        # first with reinit="create_new", several runs in one notebook).
        "track": ["wandb>=0.20", "mlflow>=3.1"],
        # export / push / hf://: a run as a Hugging Face Hub folder (tested with 2.4.0).
        "hub": ["huggingface_hub>=1.0"],
        # --tensorboard: torch.utils.tensorboard needs the tensorboard package.
        "tensorboard": ["tensorboard>=2.10"],
        # test_policy --video: gymnasium's RecordVideo writes MP4s with moviepy;
        # the classic-control environments draw their frames with pygame.
        "video": ["moviepy>=1.0.0", "pygame-ce>=2.1.3"],
        "mujoco": ["gymnasium[mujoco]>=1.1"],
        # spinup/HalfCheetah-v5 ... spinup/Humanoid-v5: the MuJoCo tasks simulated in batches
        # by MuJoCo Warp, on a CUDA GPU (or, slowly, on the CPU); tested with mujoco-warp 4.0.0
        # and warp-lang 1.19.0 (1.19: log_level). Needs gymnasium's model files.
        "gpu": ["mujoco-warp>=4.0", "warp-lang>=1.19", "gymnasium[mujoco]>=1.1"],
        "box2d": ["gymnasium[box2d]>=1.1"],
        # django-static-mathjax ships MathJax 3; docs/conf.py copies it next to the pages so
        # math renders without the network (it needs no Django). myst-nb renders the tutorial
        # notebooks (docs/notebooks) with their saved outputs.
        "docs": ["sphinx>=7", "sphinx-rtd-theme>=2.0", "django-static-mathjax>=3.2.2",
                 "myst-nb>=1.1"],
        # benchmarks/time_to_threshold.py; tianshou pins pandas<3 and deepdiff<8 in its metadata
        # but runs with newer ones: `pip install --no-deps tianshou` if pip wants to downgrade.
        "bench": ["stable-baselines3>=2.3", "tianshou>=2.0"],
    },
    entry_points={"console_scripts": ["spinup=spinup.run:main"]},
    license="MIT",
)
